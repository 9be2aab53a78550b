# The TensorFlow check of scripts/gpu-tensorflow.sh: the GPU listed, a matmul and a
# convolution run on it and compared with references computed on the CPU.
# Exit 0: both match; 1: a mismatch; 3: TensorFlow sees no GPU.
import os, sys, time
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "0")
import numpy as np
import tensorflow as tf
print("tensorflow", tf.__version__)
info = tf.sysconfig.get_build_info()
print("built for CUDA", info.get("cuda_version"), "cuDNN", info.get("cudnn_version"))
gpus = tf.config.list_physical_devices("GPU")
print("GPUs:", gpus)
if not gpus:
    sys.exit(3)
print("device:", tf.config.experimental.get_device_details(gpus[0]))
rng = np.random.default_rng(0)
a = rng.standard_normal((4096, 4096), dtype=np.float32)
b = rng.standard_normal((4096, 4096), dtype=np.float32)
with tf.device("/GPU:0"):
    ta, tb = tf.constant(a), tf.constant(b)
    c = tf.matmul(ta, tb)
    _ = c.numpy()
    t = time.perf_counter()
    for _ in range(10):
        c = tf.matmul(ta, tb)
    c = c.numpy()
    dt = (time.perf_counter() - t) / 10
print("matmul 4096 fp32 on", tf.matmul(ta, tb).device, f"{2*4096**3/dt/1e12:.1f} TFLOP/s")
ref = a.astype(np.float64) @ b.astype(np.float64)
err = np.abs(c - ref).max() / np.abs(ref).max()
print(f"matmul max rel err vs float64 numpy: {err:.2e}")
x = rng.standard_normal((8, 64, 64, 32), dtype=np.float32)
w = rng.standard_normal((3, 3, 32, 64), dtype=np.float32)
with tf.device("/GPU:0"):
    yg = tf.nn.conv2d(x, w, strides=1, padding="SAME")
with tf.device("/CPU:0"):
    yc = tf.nn.conv2d(x, w, strides=1, padding="SAME")
print("conv2d on", yg.device, "shape", tuple(yg.shape))
cerr = float(tf.reduce_max(tf.abs(yg - yc)) / tf.reduce_max(tf.abs(yc)))
print(f"conv2d max rel err GPU vs CPU: {cerr:.2e}")
ok = err < 1e-2 and cerr < 1e-2
print("RESULT", "ok" if ok else "MISMATCH")
sys.exit(0 if ok else 1)
