"""The pipeline's stages (parse, chunk, extract, consolidate, reflect) and a session's status through them."""
