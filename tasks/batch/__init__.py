"""Provider batch APIs (`mode: batch`): checks, creates written ahead, submissions, polls and their records in the store."""
