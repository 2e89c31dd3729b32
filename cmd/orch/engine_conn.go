package main

import (
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// Connecting to a secured Temporal cluster: the flags orch run --engine
// temporal and orch worker pass on to orch-temporal, named as the temporal
// CLI names them. The TLS flags go on orch-temporal's command line (they
// are paths); the API key goes in its environment, as $TEMPORAL_API_KEY,
// never on a command line (where ps shows it). Without the flags,
// orch-temporal reads the same variables from the environment it inherits.

// tlsFlagNames are the TLS flags, passed on as given.
var tlsFlagNames = []string{"tls", "tls-cert", "tls-key", "tls-ca", "tls-server-name"}

// apiKeyEnv is where orch-temporal reads the API key.
const apiKeyEnv = "TEMPORAL_API_KEY"

// connectionFlags registers the TLS and API key flags.
func connectionFlags(fs *pflag.FlagSet, prefix string) {
	fs.String("tls", "", prefix+"true: connect with TLS (implied by the --tls-* flags and an API key); false: never (default $TEMPORAL_TLS)")
	fs.String("tls-cert", "", prefix+"the client certificate (PEM) for mTLS (default $TEMPORAL_TLS_CERT)")
	fs.String("tls-key", "", prefix+"the client certificate's private key (PEM) (default $TEMPORAL_TLS_KEY)")
	fs.String("tls-ca", "", prefix+"the CA (PEM) that signed the server's certificate (default $TEMPORAL_TLS_CA, else the system's)")
	fs.String("tls-server-name", "", prefix+"the name the server's certificate must carry (default $TEMPORAL_TLS_SERVER_NAME)")
	fs.String("api-key", "", prefix+"the API key, sent as authorization: Bearer (default $TEMPORAL_API_KEY, which keeps it off the command line)")
}

// connectionFlagNames are the flags connectionFlags registers.
var connectionFlagNames = append(append([]string(nil), tlsFlagNames...), "api-key")

// connectionArgs are orch-temporal's arguments and environment for the
// connection flags cmd was given.
func connectionArgs(cmd *cobra.Command) (args, env []string) {
	for _, name := range tlsFlagNames {
		if f := cmd.Flag(name); f != nil && f.Changed {
			args = append(args, "--"+name, f.Value.String())
		}
	}
	if f := cmd.Flag("api-key"); f != nil && f.Changed {
		env = append(env, apiKeyEnv+"="+f.Value.String())
	}
	return args, env
}
