"""What every layer shares: reason codes and the records that cross boundaries. Imports nothing of evotui."""
