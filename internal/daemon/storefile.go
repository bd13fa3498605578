package daemon

// StoreFile is the store's database file in the data dir.
const StoreFile = "sbx.db"
