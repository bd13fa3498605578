package doctor

import (
	"database/sql"
	"fmt"
	"testing"

	_ "modernc.org/sqlite"
)

// makeStore writes an empty database with the given schema version.
func makeStore(t *testing.T, path string, version int) {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(fmt.Sprintf("PRAGMA user_version = %d", version)); err != nil {
		t.Fatal(err)
	}
}
