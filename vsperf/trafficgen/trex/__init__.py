"""TRex traffic generator backend (its client in a worker process, the server on the generator host)."""
