// How many keys (names and claims) the owner has, and their dimensions (the name
// keys' running sum has as many).
MATCH (k:Key {user: $user})
WITH count(k) AS keys
OPTIONAL MATCH (o:Owner {user: $user})
RETURN keys, size(coalesce(o.key_sum, [])) AS dims
