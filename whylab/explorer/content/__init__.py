"""What the explorer shows: topics, prose, search, MathML, the two languages' words,
negative controls and the notebook builder."""
