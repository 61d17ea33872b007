MERGE (o:Owner {user: $user})
SET o.key_sum = $sum, o.key_count = $count
