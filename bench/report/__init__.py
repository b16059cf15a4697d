"""Results read back: past runs in bench/results/history.json (`history`), markdown tables of a
summary (`report`), the plot in docs/images (`plot`)."""
