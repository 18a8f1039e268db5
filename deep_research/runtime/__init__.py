"""What a run leans on while it runs: progress events, traces, prompts, the process's HTTP
clients, and what lives as long as the process (`process`)."""
