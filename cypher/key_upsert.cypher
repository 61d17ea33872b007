// Vectors are stored as float32 through the procedure the vector index expects.
// $version is the owner's keys version this write raised (owner_keys_changed).
UNWIND $rows AS row
MERGE (k:Key {user: $user, id: row.id})
SET k.text = row.text, k.ref = row.ref, k.kind = row.kind, k.version = $version
// Claim keys carry a label of their own: the full-text index of claim words is on it.
FOREACH (_ IN CASE WHEN row.kind = 'claim' THEN [1] ELSE [] END | SET k:ClaimKey)
WITH k, row
// Claims' vectors go in a property (and vector index) of their own, so that a search
// for names never wades through claims and the other way round.
CALL db.create.setNodeVectorProperty(
  k, CASE row.kind WHEN 'claim' THEN 'claim_embedding' ELSE 'embedding' END, row.vector)
