// The table page's shared state: what more than one of its modules reads
// or sets. What only one module needs stays in that module.

// st holds the page's DataTable and what it was built from, and what is
// going on on it.
export const st = {
  table: null, // the DataTable, once built
  cols: null, // the scenario's columns (GET …/columns), in the server's order
  defaults: {}, // row field → the scenario's default
  searchMin: 3, // the shortest search sent, in characters
  searchMinCJK: 1, // the same for a search in Chinese, Japanese or Korean
  scenarioZone: "UTC", // the zone a row's times are read in when it names none
  tzField: "", // the row field that names a row's zone, if any
  layoutKeys: [], // every column's key, in cols order, then the page's own columns
  lastQuery: null, // the query of the page shown (URLSearchParams)
  editing: null, // the cell editor open, if any: {id, col, td, input, preview}
  readOnly: false, // the role may only read: no column is editable, no control changes rows
  pendingDraw: null, // a poll's draw waiting for an edit or a confirmation to close
  allMatches: null, // {key, query} while every match of a query is selected
};

// confirming holds the ids of rows showing a delete confirmation.
export const confirming = new Set();

// busy holds the ids of rows with a change on its way to the server: a
// poll leaves them alone.
export const busy = new Set();
