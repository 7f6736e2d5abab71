// OpenSSL's libcrypto, for SHA-256 only (the identity of a source's bytes).
#include <openssl/evp.h>
