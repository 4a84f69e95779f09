"""What a page shows: a chapter's figures (:mod:`.chapter`), their text and layout, the claims tables and claims
page, the layer view and the exercise checks. Imports no other part of the book.
"""
