import CMallocCount

print("receiptflow-bench: allocations so far \(rf_malloc_count())")
