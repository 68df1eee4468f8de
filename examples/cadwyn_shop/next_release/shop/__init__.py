"""The next release of the Cadwyn shop (next_release/shop/schemas.py says what changed)."""
