"""The explain use case: batches of inputs -> captured passes -> methods -> records."""
