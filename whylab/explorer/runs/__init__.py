"""Running experiments: the service, the embedded worker pool, timing runs, rate
limiting, the result caches, result JSON and the start-up warm-up; ``redis/`` holds the
several-machine deployment."""
