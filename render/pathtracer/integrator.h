// The Monte Carlo path tracer: ray–primitive intersection, material sampling, next-event estimation
// for quad lights, Russian roulette. All functions are MV_HD: the CPU strategies, the tests and the
// GPU kernels trace exactly the same paths for the same (seed, pixel, sample).
//
// Estimator. A unidirectional path tracer with next-event estimation (NEE) at diffuse vertices:
//  - at a diffuse vertex one point on the quad lights is sampled (probability ∝ area) and its
//    contribution albedo/π · Le · cosθ_s cosθ_l / d² · A_total is added if unoccluded;
//  - emission of a NEE light reached by a BSDF-sampled ray after a diffuse vertex is skipped (it is
//    already counted by NEE); emission reached from the camera or after a specular/glossy vertex, and
//    emission of spheres and boxes (never sampled by NEE), is always counted.
// This is unbiased (each light path is counted by exactly one technique). Russian roulette starts at
// depth 3 with survival probability min(max throughput component, 0.95); paths end at max_depth.
#pragma once

#include <cfloat>

#include "render/math.h"
#include "render/rng.h"
#include "render/pathtracer/scene.h"

namespace mv {

struct Ray {
  Vec3 origin, dir;
};

struct Hit {
  float t = FLT_MAX;
  Vec3 normal;        ///< geometric unit normal (outward for spheres/boxes, edge_u × edge_v for quads)
  uint32_t material = 0;
  bool nee_light = false;  ///< the hit surface is one of the NEE lights (an emitting quad)
};

MV_HD MV_INLINE bool intersect_sphere(const Sphere& s, const Ray& r, float t_min, float t_max, float& t_out) {
  const Vec3 oc = r.origin - s.center;
  const float b = dot(oc, r.dir);
  const float c = dot(oc, oc) - s.radius * s.radius;
  const float disc = b * b - c;  // r.dir is unit length
  if (disc < 0.f) return false;
  const float sq = sqrtf(disc);
  float t = -b - sq;
  if (t <= t_min || t >= t_max) {
    t = -b + sq;
    if (t <= t_min || t >= t_max) return false;
  }
  t_out = t;
  return true;
}

/// Slab test; from inside the box the far face is returned, so a box can be a closed room.
MV_HD MV_INLINE bool intersect_box(const Box& b, const Ray& r, float t_min, float t_max, float& t_out, Vec3& n_out) {
  float t0 = t_min, t1 = t_max;
  int axis0 = -1, axis1 = -1;
  for (int a = 0; a < 3; ++a) {
    const float inv = 1.f / r.dir[a];
    float tn = (b.lo[a] - r.origin[a]) * inv;
    float tf = (b.hi[a] - r.origin[a]) * inv;
    if (tn > tf) { const float tmp = tn; tn = tf; tf = tmp; }
    if (tn > t0) { t0 = tn; axis0 = a; }
    if (tf < t1) { t1 = tf; axis1 = a; }
    if (t0 > t1) return false;
  }
  float t;
  int axis;
  if (axis0 >= 0) { t = t0; axis = axis0; }          // entering from outside
  else if (axis1 >= 0 && t1 < t_max) { t = t1; axis = axis1; }  // leaving from inside
  else return false;
  if (t <= t_min || t >= t_max) return false;
  const float center = 0.5f * (b.lo[axis] + b.hi[axis]);
  const float p = r.origin[axis] + t * r.dir[axis];
  Vec3 n{0.f};
  n[axis] = p > center ? 1.f : -1.f;
  t_out = t;
  n_out = n;
  return true;
}

MV_HD MV_INLINE bool intersect_quad(const Quad& q, const Ray& r, float t_min, float t_max, float& t_out) {
  const float denom = dot(q.normal, r.dir);
  if (fabsf(denom) < 1e-12f) return false;
  const float t = dot(q.normal, q.corner - r.origin) / denom;
  if (t <= t_min || t >= t_max) return false;
  const Vec3 p = r.origin + r.dir * t - q.corner;
  // Coordinates in the (edge_u, edge_v) basis through the dual vectors.
  const Vec3 w = q.normal / q.area;  // (u × v) / |u × v|²
  const float s = dot(w, cross(p, q.edge_v));
  const float tt = dot(w, cross(q.edge_u, p));
  if (s < 0.f || s > 1.f || tt < 0.f || tt > 1.f) return false;
  t_out = t;
  return true;
}

/// Closest hit along `r` in (t_min, t_max). Returns false if the ray leaves the scene.
MV_HD inline bool intersect_scene(const SceneView& s, const Ray& r, float t_min, float t_max, Hit& hit) {
  bool any = false;
  float t;
  for (uint32_t i = 0; i < s.num_spheres; ++i) {
    if (intersect_sphere(s.spheres[i], r, t_min, t_max, t)) {
      t_max = t;
      any = true;
      hit.t = t;
      hit.normal = (r.origin + r.dir * t - s.spheres[i].center) / s.spheres[i].radius;
      hit.material = s.spheres[i].material;
      hit.nee_light = false;
    }
  }
  for (uint32_t i = 0; i < s.num_boxes; ++i) {
    Vec3 n;
    if (intersect_box(s.boxes[i], r, t_min, t_max, t, n)) {
      t_max = t;
      any = true;
      hit.t = t;
      hit.normal = n;
      hit.material = s.boxes[i].material;
      hit.nee_light = false;
    }
  }
  int quad_hit = -1;
  for (uint32_t i = 0; i < s.num_quads; ++i) {
    if (intersect_quad(s.quads[i], r, t_min, t_max, t)) {
      t_max = t;
      quad_hit = static_cast<int>(i);
    }
  }
  if (quad_hit >= 0) {
    const Quad& q = s.quads[quad_hit];
    any = true;
    hit.t = t_max;
    hit.normal = q.normal;
    hit.material = q.material;
    hit.nee_light = max_component(s.materials[q.material].emission) > 0.f;
  }
  return any;
}

/// True if anything blocks the segment origin + t·dir, t in (t_min, t_max).
MV_HD inline bool occluded(const SceneView& s, const Ray& r, float t_min, float t_max) {
  float t;
  for (uint32_t i = 0; i < s.num_spheres; ++i)
    if (intersect_sphere(s.spheres[i], r, t_min, t_max, t)) return true;
  Vec3 n;
  for (uint32_t i = 0; i < s.num_boxes; ++i)
    if (intersect_box(s.boxes[i], r, t_min, t_max, t, n)) return true;
  for (uint32_t i = 0; i < s.num_quads; ++i)
    if (intersect_quad(s.quads[i], r, t_min, t_max, t)) return true;
  return false;
}

/// Cosine-weighted direction about unit normal n (pdf cosθ/π).
MV_HD MV_INLINE Vec3 sample_cosine(Vec3 n, float u1, float u2) {
  const float r = sqrtf(u1);
  const float phi = 2.f * kPi * u2;
  Vec3 t, b;
  onb(n, t, b);
  return normalize(t * (r * cosf(phi)) + b * (r * sinf(phi)) + n * sqrtf(fmaxf(0.f, 1.f - u1)));
}

/// Direction from the normalised Phong lobe cos^e about axis `a` (pdf (e+1)/2π cos^e).
MV_HD MV_INLINE Vec3 sample_phong(Vec3 a, float exponent, float u1, float u2) {
  const float cos_t = powf(u1, 1.f / (exponent + 1.f));
  const float sin_t = sqrtf(fmaxf(0.f, 1.f - cos_t * cos_t));
  const float phi = 2.f * kPi * u2;
  Vec3 t, b;
  onb(a, t, b);
  return normalize(t * (sin_t * cosf(phi)) + b * (sin_t * sinf(phi)) + a * cos_t);
}

/// Unpolarised reflectance of a smooth dielectric interface (the Fresnel equations; Hecht, "Optics",
/// 5th ed., §4.6.2; pbrt-v3 §8.2.1, FrDielectric): the mean of the s- and p-polarised reflectances
///   r_s = (η_i cosθ_i − η_t cosθ_t) / (η_i cosθ_i + η_t cosθ_t),
///   r_p = (η_t cosθ_i − η_i cosθ_t) / (η_t cosθ_i + η_i cosθ_t),   F = (r_s² + r_p²) / 2,
/// with cosθ_t from Snell's law, sin²θ_t = (η_i/η_t)² (1 − cos²θ_i).
/// `cos_i`: cosine of the angle between the incident direction and the normal on the incident side, in
/// [0, 1] (clamped to it); `eta_i`, `eta_t` > 0: refractive indices of the incident and the transmitting
/// medium. Returns F in [0, 1]; 1 under total internal reflection (sin²θ_t ≥ 1).
MV_HD MV_INLINE float fresnel_dielectric(float cos_i, float eta_i, float eta_t) {
  cos_i = fminf(fmaxf(cos_i, 0.f), 1.f);
  const float eta = eta_i / eta_t;
  const float sin2_t = eta * eta * fmaxf(0.f, 1.f - cos_i * cos_i);
  if (sin2_t >= 1.f) return 1.f;
  const float cos_t = sqrtf(1.f - sin2_t);
  const float r_s = (eta_i * cos_i - eta_t * cos_t) / (eta_i * cos_i + eta_t * cos_t);
  const float r_p = (eta_t * cos_i - eta_i * cos_t) / (eta_t * cos_i + eta_i * cos_t);
  return 0.5f * (r_s * r_s + r_p * r_p);
}

/// Next-event estimate at a diffuse vertex p with shading normal n: one point on the quad lights.
MV_HD inline Vec3 sample_direct(const SceneView& s, Vec3 p, Vec3 n, Vec3 albedo, SampleRng& rng) {
  if (s.num_lights == 0) return Vec3{0.f};
  // Pick a light with probability area_i / light_area by binary search of the CDF.
  const float x = rng.uniform() * s.light_area;
  uint32_t lo = 0, hi = s.num_lights - 1;
  while (lo < hi) {
    const uint32_t mid = (lo + hi) / 2;
    if (s.light_cdf[mid] > x) hi = mid; else lo = mid + 1;
  }
  const Quad& q = s.quads[s.lights[lo]];
  const float u1 = rng.uniform(), u2 = rng.uniform();
  const Vec3 y = q.corner + q.edge_u * u1 + q.edge_v * u2;
  Vec3 wi = y - p;
  const float d2 = dot(wi, wi);
  const float d = sqrtf(d2);
  wi = wi / d;
  const float cos_s = dot(n, wi);
  const float cos_l = -dot(q.normal, wi);  // lights emit on their normal's side only
  if (cos_s <= 0.f || cos_l <= 0.f) return Vec3{0.f};
  if (occluded(s, Ray{p, wi}, s.epsilon, d * (1.f - 1e-4f) - s.epsilon)) return Vec3{0.f};
  const Vec3 le = s.materials[q.material].emission;
  return albedo * le * (cos_s * cos_l * s.light_area / (kPi * d2));
}

/// Camera ray through pixel (px, py) jittered by (jx, jy) in [0,1)², y = 0 the top row.
MV_HD MV_INLINE Ray camera_ray(const SceneView& s, int px, int py, float jx, float jy) {
  const float u = (static_cast<float>(px) + jx) / static_cast<float>(s.width);
  const float v = 1.f - (static_cast<float>(py) + jy) / static_cast<float>(s.height);
  const CameraFrame& c = s.camera;
  return Ray{c.origin, normalize(c.lower_left + c.horizontal * u + c.vertical * v - c.origin)};
}

/// Radiance arriving along `ray`: one path sample.
MV_HD inline Vec3 trace_path(const SceneView& s, Ray ray, SampleRng& rng) {
  Vec3 radiance{0.f}, throughput{1.f};
  bool after_diffuse = false;
  for (uint32_t depth = 0; depth < s.max_depth; ++depth) {
    Hit hit;
    if (!intersect_scene(s, ray, s.epsilon, FLT_MAX, hit)) {
      radiance += throughput * s.background;
      break;
    }
    const Material& m = s.materials[hit.material];
    const bool front = dot(ray.dir, hit.normal) < 0.f;
    const Vec3 n = front ? hit.normal : -hit.normal;  // shading normal, facing the incoming ray
    if (!(hit.nee_light && (after_diffuse || !front))) radiance += throughput * m.emission;
    if (m.type == MaterialType::Emissive) break;

    const Vec3 p = ray.origin + ray.dir * hit.t;
    Vec3 dir;
    switch (m.type) {
      case MaterialType::Diffuse: {
        radiance += throughput * sample_direct(s, p, n, m.albedo, rng);
        const float u1 = rng.uniform(), u2 = rng.uniform();
        dir = sample_cosine(n, u1, u2);
        throughput *= m.albedo;
        after_diffuse = true;
        break;
      }
      case MaterialType::Mirror:
        dir = reflect(ray.dir, n);
        throughput *= m.albedo;
        after_diffuse = false;
        break;
      case MaterialType::Glossy: {
        const float u1 = rng.uniform(), u2 = rng.uniform();
        dir = sample_phong(reflect(ray.dir, n), m.exponent, u1, u2);
        if (dot(dir, n) <= 0.f) return radiance;  // sampled below the surface: the lobe loses this energy
        throughput *= m.albedo;
        after_diffuse = false;
        break;
      }
      case MaterialType::Glass: {
        const float eta_i = front ? 1.f : m.ior, eta_t = front ? m.ior : 1.f;
        const float eta = eta_i / eta_t;
        const float cos_i = -dot(ray.dir, n);
        const float sin2_t = eta * eta * fmaxf(0.f, 1.f - cos_i * cos_i);
        // Reflect with probability F, refract otherwise; F = 1 under total internal reflection (uniform() < 1).
        const float fr = fresnel_dielectric(cos_i, eta_i, eta_t);
        if (rng.uniform() < fr) {
          dir = reflect(ray.dir, n);
        } else {
          const float cos_t = sqrtf(fmaxf(0.f, 1.f - sin2_t));
          dir = normalize(ray.dir * eta + n * (eta * cos_i - cos_t));
        }
        throughput *= m.albedo;
        after_diffuse = false;
        break;
      }
      default:
        return radiance;
    }
    ray = Ray{p, dir};
    if (depth >= 3) {
      const float q = fminf(max_component(throughput), 0.95f);
      if (q <= 0.f || rng.uniform() >= q) break;
      throughput = throughput / q;
    }
  }
  return radiance;
}

/// One sample of pixel (px, py): the sample index selects the random stream (and with it the jitter).
MV_HD inline Vec3 pixel_sample(const SceneView& s, uint32_t seed, int px, int py, uint32_t sample) {
  SampleRng rng(seed, static_cast<uint32_t>(py * s.width + px), sample);
  const float jx = rng.uniform(), jy = rng.uniform();
  return trace_path(s, camera_ray(s, px, py, jx, jy), rng);
}

}  // namespace mv
