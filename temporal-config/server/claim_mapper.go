package main

// The claim mapper of the platform's Temporal nodes (docs/decisions/036-own-temporal-server-and-its-keys.md).
// Temporal's default mapper trusts every key it is given alike, so a key that signs the platform's own
// tokens could also sign an administrator's. This one keeps three classes of keys apart, each with its own
// key provider: the administrator's key (its claims as they are), the workload key of the API, the workers
// and the Web UI (capped: never admin, at most read on the cluster), and the organisation's identity
// provider for operators (its issuer pinned, its ID tokens refused). The class whose key verifies a token's
// signature decides; a token no class verifies is refused.

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/golang-jwt/jwt/v4"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/server/common/authorization"
	"go.temporal.io/server/common/config"
	"go.temporal.io/server/common/log"
)

// The name server.yaml gives this mapper: a node whose configuration names another refuses to start.
const opsflowClaimMapperName = "opsflow"

// Environment variables naming each class's keys.
const (
	envWorkloadJWKS   = "TEMPORAL_JWKS_URI"
	envAdminJWKS      = "TEMPORAL_ADMIN_JWKS_URI"
	envOperatorJWKS   = "TEMPORAL_OPERATOR_JWKS_URI"
	envOperatorIssuer = "TEMPORAL_OPERATOR_ISSUER"
	// The namespaces the platform's processes work in, comma-separated: a workload token opens no other.
	// An entry ending in * takes every namespace it begins (a test platform's, named per test file).
	envWorkloadNamespaces = "TEMPORAL_WORKLOAD_NAMESPACES"
)

// What a workload token may hold at most: on the cluster, read (the Web UI lists namespaces); on a
// namespace, write (the workers create schedules). Never admin anywhere.
const (
	workloadSystemCap    = authorization.RoleReader
	workloadNamespaceCap = authorization.RoleWriter
)

// keyClass is one source of keys with its own rule for what its tokens may do.
type keyClass struct {
	name   string
	mapper authorization.ClaimMapper
	// decide turns the verified token's claims into the claims the authorizer sees, or refuses them.
	decide func(token string, claims *authorization.Claims) (*authorization.Claims, error)
}

type opsflowClaimMapper struct {
	classes []keyClass
}

var _ authorization.ClaimMapper = (*opsflowClaimMapper)(nil)

// newOpsflowClaimMapper reads each class's keys from the node's environment. The workload and administrator
// keys are required; the operator's are optional, but never without a pinned issuer.
func newOpsflowClaimMapper(cfg *config.Authorization, logger log.Logger) (authorization.ClaimMapper, error) {
	if !strings.EqualFold(cfg.ClaimMapper, opsflowClaimMapperName) {
		return nil, fmt.Errorf("server.yaml must name claimMapper %q (it names %q): this server maps claims by key class", opsflowClaimMapperName, cfg.ClaimMapper)
	}
	workload, admin := os.Getenv(envWorkloadJWKS), os.Getenv(envAdminJWKS)
	if workload == "" || admin == "" {
		return nil, fmt.Errorf("%s and %s are both required: the workload key and the administrator's key", envWorkloadJWKS, envAdminJWKS)
	}
	if workload == admin {
		return nil, fmt.Errorf("%s and %s name the same JWKS: the workload key must not mint administrators", envWorkloadJWKS, envAdminJWKS)
	}
	operator, issuer := os.Getenv(envOperatorJWKS), os.Getenv(envOperatorIssuer)
	if operator != "" && issuer == "" {
		return nil, fmt.Errorf("%s is set but %s is not: an operator's token is taken only from the pinned issuer", envOperatorJWKS, envOperatorIssuer)
	}
	var namespaces []string
	for _, namespace := range strings.Split(os.Getenv(envWorkloadNamespaces), ",") {
		if namespace = strings.TrimSpace(namespace); namespace != "" {
			namespaces = append(namespaces, namespace)
		}
	}
	if len(namespaces) == 0 {
		return nil, fmt.Errorf("%s is required: the namespaces the workload key may write", envWorkloadNamespaces)
	}
	classes := []keyClass{
		{name: "admin", mapper: classMapper(cfg, admin, logger), decide: asGiven},
		{name: "workload", mapper: classMapper(cfg, workload, logger), decide: capWorkload(namespaces)},
	}
	if operator != "" {
		classes = append(classes, keyClass{name: "operator", mapper: classMapper(cfg, operator, logger), decide: operatorRule(issuer)})
	}
	return &opsflowClaimMapper{classes: classes}, nil
}

// classMapper is Temporal's default mapper over one class's keys: it checks the signature, the expiry and
// the audience, and reads the permissions claim, as it does for the whole configuration.
func classMapper(cfg *config.Authorization, uri string, logger log.Logger) authorization.ClaimMapper {
	own := *cfg
	own.JWTKeyProvider = config.JWTKeyProvider{KeySourceURIs: []string{uri}, RefreshInterval: cfg.JWTKeyProvider.RefreshInterval}
	return authorization.NewDefaultJWTClaimMapper(authorization.NewDefaultTokenKeyProvider(&own, logger), &own, logger)
}

func (m *opsflowClaimMapper) GetClaims(authInfo *authorization.AuthInfo) (*authorization.Claims, error) {
	if authInfo.AuthToken == "" {
		// No token: no roles, as the default mapper answers; the authorizer lets only health checks through.
		return &authorization.Claims{AuthType: "jwt"}, nil
	}
	for _, class := range m.classes {
		claims, err := class.mapper.GetClaims(authInfo)
		if notThisClass(err) {
			continue
		}
		if err != nil {
			return nil, err
		}
		return class.decide(bearerToken(authInfo.AuthToken), claims)
	}
	return nil, serviceerror.NewPermissionDenied("token signed by no trusted key", "")
}

// notThisClass: the class holds no key of this token's id, or its key does not verify the signature. Any
// other failure (expired, wrong audience) is the verifying class's answer, and final.
func notThisClass(err error) bool {
	var invalid *jwt.ValidationError
	if err == nil || !errors.As(err, &invalid) {
		return false
	}
	return invalid.Errors&(jwt.ValidationErrorUnverifiable|jwt.ValidationErrorSignatureInvalid) != 0
}

func bearerToken(header string) string {
	if parts := strings.SplitN(header, " ", 2); len(parts) == 2 {
		return parts[1]
	}
	return header
}

func asGiven(_ string, claims *authorization.Claims) (*authorization.Claims, error) {
	return claims, nil
}

// capWorkload keeps what the platform's processes need and drops the rest: a workload key that signs
// `temporal-system:admin` or `<namespace>:admin` gets neither, and a namespace not the platform's is dropped.
func capWorkload(namespaces []string) func(string, *authorization.Claims) (*authorization.Claims, error) {
	return func(_ string, claims *authorization.Claims) (*authorization.Claims, error) {
		claims.System = capped(claims.System, workloadSystemCap)
		for namespace, role := range claims.Namespaces {
			if workloadMay(namespaces, namespace) {
				claims.Namespaces[namespace] = capped(role, workloadNamespaceCap)
			} else {
				delete(claims.Namespaces, namespace)
			}
		}
		return claims, nil
	}
}

// workloadMay: the namespace is one of the list, or begins with an entry ending in *.
func workloadMay(namespaces []string, namespace string) bool {
	for _, allowed := range namespaces {
		if allowed == namespace || (strings.HasSuffix(allowed, "*") && strings.HasPrefix(namespace, strings.TrimSuffix(allowed, "*"))) {
			return true
		}
	}
	return false
}

// capped lowers a role to at most `most`, in the order the default authorizer compares roles (a role
// meets a call's need when it is at least the role the call needs): admin becomes `most`, never more.
func capped(role, most authorization.Role) authorization.Role {
	if role > most {
		return most
	}
	return role
}

// operatorRule takes a token of the organisation's provider only from the pinned issuer, and never an ID
// token: an ID token is meant for the client that signed in, and any client of the provider may hold one.
// The same rule as the API's for the platform's users (docs/security.md): a header type other than JWT or
// at+jwt, an ID token's own claims (nonce, at_hash, c_hash), or a type that says ID is refused.
func operatorRule(issuer string) func(string, *authorization.Claims) (*authorization.Claims, error) {
	return func(token string, claims *authorization.Claims) (*authorization.Claims, error) {
		// The signature is verified already: this reads what it signed.
		parsed, _, err := jwt.NewParser().ParseUnverified(token, jwt.MapClaims{})
		if err != nil {
			return nil, serviceerror.NewPermissionDenied("malformed token", "")
		}
		raw, _ := parsed.Claims.(jwt.MapClaims)
		if iss, _ := raw["iss"].(string); iss != issuer {
			return nil, serviceerror.NewPermissionDenied("token of another issuer", "")
		}
		if !accessTokenType(parsed.Header["typ"]) || isIDToken(raw["typ"]) || isIDToken(raw["token_use"]) {
			return nil, serviceerror.NewPermissionDenied("ID tokens are not taken", "")
		}
		for _, claim := range []string{"nonce", "at_hash", "c_hash"} {
			if _, present := raw[claim]; present {
				return nil, serviceerror.NewPermissionDenied("ID tokens are not taken", "")
			}
		}
		return claims, nil
	}
}

// tokenKind: a type claim or header as one word, in lower case, without application/.
func tokenKind(value any) string {
	kind, _ := value.(string)
	return strings.TrimPrefix(strings.ToLower(strings.TrimSpace(kind)), "application/")
}

// accessTokenType: no header type, or JWT, or at+jwt (RFC 9068).
func accessTokenType(value any) bool {
	switch kind := tokenKind(value); {
	case value == nil, kind == "jwt", kind == "at+jwt":
		return true
	}
	return false
}

// isIDToken: Keycloak's claim typ "ID", Cognito's token_use "id", and the header types some providers give.
func isIDToken(value any) bool {
	switch tokenKind(value) {
	case "id", "id_token", "id-token", "idtoken", "id+jwt", "id_token+jwt":
		return true
	}
	return false
}
