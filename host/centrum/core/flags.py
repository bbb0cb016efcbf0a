"""Bits of a snapshot's ``elements.flags`` (PROTOCOL.md, "Element flags"); ``centrum.core.snapshot`` re-exports them."""

VISIBLE = 1  # has a layout box, computed visibility is visible and effective opacity > 0
LINK = 2  # <a href> / <area href>
IMAGE = 4  # img, picture, svg, video, canvas, input[type=image], or a CSS background image on a leaf
FIXED = 8  # computed position: fixed
STICKY = 16  # computed position: sticky
OPAQUE_FRAME = 32  # cross-origin iframe: recorded as a box only
SHADOW_HOST = 64  # children include the element's open shadow root content
IN_FRAME = 128  # element lives inside a same-origin iframe (boxes already in top document coordinates)
