"""Files CodeBurn owns: results and daily caches, the import store, config, locks."""
