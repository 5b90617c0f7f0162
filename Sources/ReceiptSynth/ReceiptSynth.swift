// Synthetic receipts and the test CA.
