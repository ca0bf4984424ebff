"""One construct per unit of the Cairn stack; stacks only compose them."""
