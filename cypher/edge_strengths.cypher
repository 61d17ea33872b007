// Reinforcement writes strength and state only: what an ingest added to the same
// claims in the meantime (citations, properties, a better snippet) stays.
UNWIND $rows AS row
MATCH ()-[r]->()
WHERE elementId(r) = row.ref AND r.user = $user
SET r.strength = row.strength, r.strength0 = row.strength0,
    r.touched_at = datetime(row.touched_at), r.dormant = row.dormant, r.expired = row.expired
