-- Migration 8: the fiscal records of one chain read in order from a given
-- record (FiscalRecords: WHERE kind = ? AND id > ? ORDER BY id) go through
-- an index of their own, so that reading a chain's tail, as a closing or a
-- verification does, costs what is read, not the chain's whole length.
CREATE INDEX fiscal_records_by_kind_id ON fiscal_records (kind, id);
