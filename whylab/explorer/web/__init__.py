"""The explorer's top floor: the web app (factory, routers, dependencies, page cache,
guard, error pages), its HTML rendering, the static export and the HTTP server's settings."""
