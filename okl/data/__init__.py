"""Dataset files: the catalog (URLs, checksums, formats), locating and downloading them (sources), parsing
(parsers), the memory-mapped array cache (cache) and the preprocessing presets (preprocess). The streams
that read them live in :mod:`okl.datasets`."""
