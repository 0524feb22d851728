"""Each command's options (written once: flag, keyword, help, check) and its use case on files."""
