# tf.image and friends as TF1 input pipelines and the CIFAR-10 model use them: flips,
# resizing (legacy, align_corners, half-pixel; gradients), LRN and its gradient,
# standardization, brightness/contrast, dtype conversion, crops and pads, PNG decoding of
# every filter / bit depth / color type (tests/fixtures/png) and encoding; against TF.
import os
import numpy as np
import tensorflow as tf

here = os.path.dirname(os.path.abspath(__file__))
pngs = os.path.join(here, "..", "fixtures", "png")
s = tf.Session()

def run(t):
    try:
        v = s.run(t)
        print(v if not isinstance(v, np.ndarray) or v.dtype != np.float32 else np.round(v, 5))
    except tf.errors.OpError as e:
        m = getattr(e, "message", str(e))
        ls = [l for l in m.splitlines() if l.strip() and not l.startswith(("Graph", "Detected", "  ", "Node:", "\t"))]
        print(type(e).__name__ + ":", (ls[0] if ls else m).replace(pngs, "PNGS"))

img = tf.constant(np.arange(2 * 3 * 4 * 2, dtype=np.float32).reshape(2, 3, 4, 2) / 7.0)
u8 = tf.constant((np.arange(3 * 4 * 3).reshape(3, 4, 3) * 11 % 256).astype(np.uint8))
run(tf.reverse(img[0], [1]))
run(tf.reverse(u8, [0, -1]))
run(tf.image.flip_left_right(u8))
run(tf.image.flip_up_down(img)[:, :, 0, 0])
run(tf.image.rot90(u8[:, :, 0]  [:, :, None], 1)[:, :, 0])
run(tf.image.rot90(u8[:, :, :1], 3)[:, :, 0])
run(tf.image.transpose_image(img)[1, :, :, 1])
for align, half in ((False, False), (True, False), (False, True)):
    r = tf.image.resize_bilinear(img, [5, 3], align_corners=align, half_pixel_centers=half)
    print(r.dtype, r.shape)
    run(r[1, :, :, 0])
    run(tf.gradients(tf.reduce_sum(r * r), img)[0][1, :, :, 0])
    n = tf.image.resize_nearest_neighbor(img, [5, 7], align_corners=align, half_pixel_centers=half)
    run(n[0, :, :, 1])
    run(tf.gradients(tf.reduce_sum(n * n), img)[0][0, :, :, 1])
run(tf.image.resize_images(u8, [2, 6])[:, :, 0])
run(tf.image.resize_images(u8, [6, 2], method=tf.image.ResizeMethod.NEAREST_NEIGHBOR)[:, :, 2])
print(tf.image.resize_images(u8, [3, 4]).dtype)
x = tf.constant(np.sin(np.arange(2 * 2 * 2 * 7, dtype=np.float32)).reshape(2, 2, 2, 7))
l = tf.nn.lrn(x, depth_radius=2, bias=1.0, alpha=0.001 / 9.0, beta=0.75)
run(l[1, 1])
run(tf.gradients(tf.reduce_sum(l * tf.cos(x)), x)[0][1, 0])
run(tf.nn.local_response_normalization(x)[0, 0])
run(tf.gradients(tf.reduce_sum(tf.reverse(x, [3]) * x), x)[0][0, 1])
run(tf.image.per_image_standardization(u8)[:, :, 1])
run(tf.image.per_image_standardization(tf.zeros([2, 2, 1])))
run(tf.image.adjust_brightness(u8, 0.2)[:, :, 0])
run(tf.image.adjust_brightness(img, -0.5)[0, :, :, 0])
run(tf.image.adjust_contrast(img, 1.7)[1, :, :, 1])
run(tf.image.adjust_contrast(u8, 0.5)[:, :, 2])
run(tf.image.convert_image_dtype(u8, tf.float32)[0])
run(tf.image.convert_image_dtype(tf.constant([[[0.0, 0.5, 1.0, 1.2, -0.1]]]), tf.uint8, saturate=True))
run(tf.image.rgb_to_grayscale(u8)[:, :, 0])
run(tf.image.rgb_to_grayscale(img[:, :, :, :1] * tf.ones([1, 1, 1, 3]))[0, :, :, 0])
run(tf.image.grayscale_to_rgb(u8[:, :, :1])[1])
run(tf.image.crop_to_bounding_box(u8, 1, 1, 2, 2)[:, :, 0])
run(tf.image.pad_to_bounding_box(u8, 1, 2, 5, 7)[:, :, 0])
run(tf.image.resize_image_with_crop_or_pad(u8, 2, 6)[:, :, 0])
run(tf.image.resize_image_with_crop_or_pad(u8, 5, 3)[:, :, 1])
run(tf.image.central_crop(u8, 0.5)[:, :, 0])
print(tf.image.random_flip_left_right(u8).shape, tf.image.random_flip_up_down(img).shape,
      tf.random_crop(u8, [2, 2, 3]).shape, tf.image.random_brightness(img, 0.3).dtype,
      tf.image.random_contrast(u8, 0.2, 1.8).dtype)
rc = s.run(tf.random_crop(u8, [2, 3, 3]))
full = s.run(u8)
print(rc.shape, any((full[i:i + 2, j:j + 3] == rc).all() for i in range(2) for j in range(2)))
run(tf.random_crop(u8, [4, 2, 3]))
for bad in (lambda: tf.image.random_contrast(u8, 1.0, 0.5), lambda: tf.image.random_brightness(u8, -1.0),
            lambda: tf.image.flip_left_right(tf.zeros([3, 3]))):
    try:
        bad()
    except ValueError as e:
        print("ValueError:", e)
print(tf.round(tf.constant([0.5, 1.5, 2.5, -0.5, -1.7])).eval(session=s))

for f in sorted(n for n in os.listdir(pngs) if n.endswith(".png")):
    data = tf.read_file(os.path.join(pngs, f))
    print(f)
    run(tf.transpose(tf.image.decode_png(data), [2, 0, 1]))
run(tf.image.decode_png(tf.read_file(os.path.join(pngs, "rgba_paeth.png")), channels=3)[0])
run(tf.image.decode_png(tf.read_file(os.path.join(pngs, "gray4.png")), channels=3)[1])
run(tf.image.decode_png(tf.read_file(os.path.join(pngs, "ga_avg.png")), channels=4)[2])
round_trip = tf.image.decode_png(tf.image.encode_png(u8))
print(s.run(tf.reduce_all(tf.equal(round_trip, u8))), round_trip.dtype)
run(tf.read_file(os.path.join(pngs, "missing.png")))
