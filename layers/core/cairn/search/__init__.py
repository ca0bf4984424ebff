"""Search logic shared by every search engine: the text analyzer and rank fusion.

The local SQLite index and the AWS OpenSearch adapter both use these, so a memory ranks the same way
whichever engine holds it.
"""
