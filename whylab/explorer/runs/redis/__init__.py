"""The several-machine deployment on Redis: the link, the shared result cache, runs in
flight, the rate limit, the run queue and the ``whylab worker`` process."""
