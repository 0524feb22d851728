"""What flows between the stages as data: input rows, labelled training data, attribution records (JSON Lines)."""
