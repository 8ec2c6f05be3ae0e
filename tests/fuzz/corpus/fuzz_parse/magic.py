%cluster
x?
%timeit sess.run(y)
