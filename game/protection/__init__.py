"""Game protection: what a round's cards say about how it was played and dealt.

Plain Python (numpy where it pays), no Django, like ``game``: the
service knows every seat's hole cards, the board and the dealer's cards once
a round is posted, which no one at the table knew while it was dealt.
"""
