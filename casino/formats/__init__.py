"""The casino's own date and time formats, where Django's for a locale do not fit a casino floor.

Only what differs is declared; everything else is Django's for the locale.
"""
