"""British English with a 24-hour clock and one way of writing a date: the ISO one.

Django's en_GB writes times as "2:30 p.m." and dates as "25 Oct 2006"; a
casino's shifts, cut-off hour and count sheets are on the 24-hour clock, and
an auditor reading a gaming day, a round's time and a report's range side by
side should meet one form of date on every page: "2006-10-25 14:30".
"""

DATE_FORMAT = "Y-m-d"  # '2006-10-25'
SHORT_DATE_FORMAT = "Y-m-d"
TIME_FORMAT = "H:i"  # '14:30'
DATETIME_FORMAT = "Y-m-d H:i"  # '2006-10-25 14:30'
SHORT_DATETIME_FORMAT = "Y-m-d H:i"
