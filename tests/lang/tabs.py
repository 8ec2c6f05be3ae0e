if True:
	x = 1
	if x:
		print("tabs", x)
	else:
		pass
print("done")
