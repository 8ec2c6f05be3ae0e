# datetime as TF1 scripts log with it, tarfile/urllib stand-ins that refuse; output from python3.
from datetime import datetime, timedelta, date
import datetime as dtm
a = datetime(2026, 12, 1, 1, 20, 3, 123456)
b = datetime(2024, 2, 28, 23, 59, 59)
print(a, repr(a), b, repr(b), a.isoformat(), b.strftime("%Y/%m/%d %H-%M-%S %a %j"), a.strftime("%f"))
d = a - b
print(d, repr(d), d.days, d.seconds, d.microseconds, d.total_seconds())
print(b + timedelta(seconds=2), b - timedelta(days=366), timedelta(hours=-1), timedelta(minutes=90))
print(date(2000, 3, 1).weekday(), date(2000, 3, 1), repr(date(1999, 12, 31)), date(2000, 2, 29).strftime("%A %b"))
n = datetime.now(); print(type(n).__name__, n.year >= 2025, isinstance(n, date), dtm.MAXYEAR)
print(datetime.fromtimestamp(0) - datetime.fromtimestamp(86400 * 3 + 5))
from six.moves import urllib
try:
    urllib.request.urlretrieve("http://x/y.tar.gz", "/tmp/y.tar.gz")
except OSError as e:
    print("OSError")
