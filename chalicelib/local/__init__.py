"""Running the Chalice app on a laptop: the local HTTP server and the in-process scheduler."""
