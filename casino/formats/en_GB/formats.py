"""British English with a 24-hour clock.

Django's en_GB writes times as "2:30 p.m."; a casino's shifts, cut-off hour
and count sheets are on the 24-hour clock, as in Europe generally.
"""

TIME_FORMAT = "H:i"  # '14:30'
DATETIME_FORMAT = "j M Y, H:i"  # '25 Oct 2006, 14:30'
SHORT_DATETIME_FORMAT = "d/m/Y H:i"  # '25/10/2006 14:30'
