// Dispatch stages, backpressure and ordering.
