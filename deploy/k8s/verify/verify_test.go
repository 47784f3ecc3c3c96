// Package verify checks the Kubernetes manifests of deploy/k8s with the
// real tools: kustomize builds the base and every overlay, and each object
// it renders is decoded strictly into the official API types (k8s.io/api),
// so a misspelt or misplaced field, a wrong type or a duplicate key fails.
// It is its own module so that the main module does not carry the
// Kubernetes dependencies; scripts/test.sh runs it.
package verify

import (
	"fmt"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/json"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
)

// drainDefault is how long serve lets running steps finish after SIGTERM
// by default; pods must be given longer to stop.
const drainDefaultSeconds = 20

// decoder decodes YAML strictly into the API types of the kinds the
// manifests use; any other kind is an error.
func decoder(t *testing.T) runtime.Decoder {
	t.Helper()
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{corev1.AddToScheme, appsv1.AddToScheme, policyv1.AddToScheme} {
		if err := add(scheme); err != nil {
			t.Fatal(err)
		}
	}
	return json.NewSerializerWithOptions(json.DefaultMetaFactory, scheme, scheme,
		json.SerializerOptions{Yaml: true, Strict: true})
}

// build runs kustomize on dir and decodes every object it renders.
func build(t *testing.T, dir string) []runtime.Object {
	t.Helper()
	k := krusty.MakeKustomizer(krusty.MakeDefaultOptions())
	res, err := k.Run(filesys.MakeFsOnDisk(), dir)
	if err != nil {
		t.Fatalf("kustomize build %s: %v", dir, err)
	}
	dec := decoder(t)
	var objs []runtime.Object
	for _, r := range res.Resources() {
		y, err := r.AsYAML()
		if err != nil {
			t.Fatal(err)
		}
		obj, _, err := dec.Decode(y, nil, nil)
		if err != nil {
			t.Fatalf("%s %s/%s does not decode strictly: %v\n%s", dir, r.GetKind(), r.GetName(), err, y)
		}
		objs = append(objs, obj)
	}
	return objs
}

func find[T runtime.Object](objs []runtime.Object, name string) (T, bool) {
	for _, o := range objs {
		if v, ok := o.(T); ok {
			if m, ok := o.(interface{ GetName() string }); ok && m.GetName() == name {
				return v, true
			}
		}
	}
	var zero T
	return zero, false
}

func TestStrictDecodingCatchesMistakes(t *testing.T) {
	dec := decoder(t)
	for name, doc := range map[string]string{
		"unknown field": "apiVersion: v1\nkind: Service\nmetadata: {name: x}\nspec: {selectr: {a: b}}\n",
		"wrong type":    "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: x}\nspec: {replicas: two}\n",
		"duplicate key": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\ndata: {a: b, a: c}\n",
		"unknown kind":  "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: x}\n",
	} {
		if _, _, err := dec.Decode([]byte(doc), nil, nil); err == nil {
			t.Errorf("%s: decoded without error", name)
		}
	}
}

func TestBase(t *testing.T) {
	objs := build(t, "../base")
	d, ok := find[*appsv1.Deployment](objs, "reasonix")
	if !ok {
		t.Fatalf("no Deployment reasonix among %d objects", len(objs))
	}
	checkDeployment(t, d)
	if _, ok := find[*corev1.Service](objs, "reasonix"); !ok {
		t.Error("no Service reasonix")
	}
	if _, ok := find[*corev1.ConfigMap](objs, "reasonix-config"); !ok {
		t.Error("no ConfigMap reasonix-config")
	}
	pdb, ok := find[*policyv1.PodDisruptionBudget](objs, "reasonix")
	if !ok || pdb.Spec.MaxUnavailable == nil || pdb.Spec.MaxUnavailable.IntValue() != 1 {
		t.Errorf("PodDisruptionBudget = %+v", pdb)
	}
	if _, ok := find[*appsv1.StatefulSet](objs, "reasonix-postgres"); !ok {
		t.Error("the base runs no Postgres")
	}
	s, ok := find[*corev1.Secret](objs, "reasonix-secrets")
	if !ok || !strings.Contains(s.StringData["REASONIX_STORE_DSN"], "@reasonix-postgres:5432/") {
		t.Errorf("the base's DSN does not name its Postgres: %+v", s)
	}
	for _, o := range objs {
		if m, ok := o.(interface{ GetNamespace() string }); ok {
			if _, isNS := o.(*corev1.Namespace); !isNS && m.GetNamespace() != "reasonix" {
				t.Errorf("%T is in namespace %q", o, m.GetNamespace())
			}
		}
	}
}

func TestExternalPostgresOverlay(t *testing.T) {
	objs := build(t, "../overlays/external-postgres")
	if _, ok := find[*appsv1.StatefulSet](objs, "reasonix-postgres"); ok {
		t.Error("the overlay still runs the in-cluster Postgres")
	}
	if _, ok := find[*corev1.Service](objs, "reasonix-postgres"); ok {
		t.Error("the overlay still has the in-cluster Postgres's Service")
	}
	s, ok := find[*corev1.Secret](objs, "reasonix-secrets")
	if !ok {
		t.Fatal("no Secret")
	}
	if dsn := s.StringData["REASONIX_STORE_DSN"]; strings.Contains(dsn, "reasonix-postgres") || dsn == "" {
		t.Errorf("the overlay's DSN = %q", dsn)
	}
	if _, ok := s.StringData["POSTGRES_PASSWORD"]; ok {
		t.Error("the overlay keeps the password of the Postgres it removed")
	}
	d, ok := find[*appsv1.Deployment](objs, "reasonix")
	if !ok {
		t.Fatal("no Deployment")
	}
	checkDeployment(t, d)
}

// checkDeployment asserts what the deployment relies on.
func checkDeployment(t *testing.T, d *appsv1.Deployment) {
	t.Helper()
	var problems []string
	fail := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	if d.Spec.Replicas == nil || *d.Spec.Replicas != 2 {
		fail("replicas = %v, want 2", d.Spec.Replicas)
	}
	pod := d.Spec.Template.Spec
	if g := pod.TerminationGracePeriodSeconds; g == nil || *g <= drainDefaultSeconds {
		fail("terminationGracePeriodSeconds = %v, want above the %ds drain", g, drainDefaultSeconds)
	}
	if sc := pod.SecurityContext; sc == nil || sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot || sc.RunAsUser == nil || *sc.RunAsUser == 0 {
		fail("the pod may run as root: %+v", sc)
	}
	if len(pod.Containers) != 1 {
		t.Fatalf("%d containers", len(pod.Containers))
	}
	c := pod.Containers[0]
	if c.ReadinessProbe == nil || c.ReadinessProbe.HTTPGet == nil || c.ReadinessProbe.HTTPGet.Path != "/readyz" {
		fail("readiness probe = %+v", c.ReadinessProbe)
	}
	if c.LivenessProbe == nil || c.LivenessProbe.HTTPGet == nil || c.LivenessProbe.HTTPGet.Path != "/healthz" {
		fail("liveness probe = %+v", c.LivenessProbe)
	}
	if c.Resources.Requests.Cpu().IsZero() || c.Resources.Requests.Memory().IsZero() || c.Resources.Limits.Memory().IsZero() {
		fail("resources = %+v", c.Resources)
	}
	if sc := c.SecurityContext; sc == nil || sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation ||
		sc.Capabilities == nil || len(sc.Capabilities.Drop) != 1 || sc.Capabilities.Drop[0] != "ALL" {
		fail("container security context = %+v", sc)
	}
	env := map[string]string{}
	for _, e := range c.Env {
		env[e.Name] = e.Value
	}
	if env["REASONIX_ADDR"] != "0.0.0.0:8080" || env["REASONIX_CONFIG"] == "" {
		fail("env = %v", env)
	}
	if len(c.EnvFrom) != 1 || c.EnvFrom[0].SecretRef == nil || c.EnvFrom[0].SecretRef.Name != "reasonix-secrets" {
		fail("envFrom = %+v", c.EnvFrom)
	}
	for _, p := range problems {
		t.Error(p)
	}
}
