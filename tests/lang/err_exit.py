import sys
print("exiting")
sys.exit(3)
