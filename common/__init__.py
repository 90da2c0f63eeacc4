"""What every layer of the pipeline uses; it imports none of them."""
