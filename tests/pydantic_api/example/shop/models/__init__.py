"""Three versions of a shop's Order, each change of the kinds Cadwyn's tutorial makes."""
