"""Provider batch APIs (`mode: batch`): checks, creates, submissions, polls, records."""
