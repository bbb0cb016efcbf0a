"""Generated corpora: the styled corpus (real static-site engines and their themes around the shared data sets'
gold texts), built on demand into a cache, never committed."""
