// Vectors are stored as float32 through the procedure the vector index expects.
UNWIND $rows AS row
MERGE (k:Key {user: $user, id: row.id})
SET k.text = row.text, k.ref = row.ref, k.kind = row.kind
WITH k, row
CALL db.create.setNodeVectorProperty(k, 'embedding', row.vector)
