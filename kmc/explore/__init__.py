"""`kmc explore`: a model walked by hand in a local web page.

`walk.py` holds the walk (the path from an initial state, the cursor on it, every state reached
so far); `query.py` the search syntax (`field op value`, never evaluated as Python);
`server.py` the JSON endpoints on loopback; `page.py` and `script.py` the one self-contained page.
"""
