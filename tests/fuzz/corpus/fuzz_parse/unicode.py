s = 'héllo ✓'
# comment ✓
t = "\u00e9\x41\N{BULLET}"
