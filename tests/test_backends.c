/* Every backend against the reference through check_backend(): random
 * problems from a fixed seed (printed on failure), both layouts, bias on and
 * off, poisoned outputs, bit-exact on small-integer data and within 1e-5
 * relative L2 on real data.  GPU cases skip, with the reason, without a GPU. */
#include <stdlib.h>

#include "test_util.h"

#define TOL 1e-5

static int env_count(const char *name, int fallback)
{
    const char *v = getenv(name);
    return v && *v ? atoi(v) : fallback;
}

static void random_problems_on(convt3d_device dev, pointer_mode mode, int count, uint64_t salt)
{
    const uint64_t base = test_seed() * 1000003u + salt;
    rng r = rng_make(base);
    for (int t = 0; t < count; t++) {
        const uint64_t seed = base + (uint64_t)t;
        convt3d_problem p = random_problem(&r, 4e5, 40000);
        check_result res = check_backend(&p, dev, seed, mode, TOL);
        assert_check(&res, &p, seed);
        if (res.skipped)
            return; /* one skip tells it all */
    }
}

static void test_cpu_random(void)
{
    convt3d_device cpu = CONVT3D_DEVICE_CPU_INIT;
    random_problems_on(cpu, HOST_POINTERS, env_count("CONVT3D_TEST_PROBLEMS", 200), 1);
}

static void test_cuda_random_device_pointers(void)
{
    convt3d_device gpu = {CONVT3D_DEVICE_CUDA, 0};
    random_problems_on(gpu, DEVICE_POINTERS, env_count("CONVT3D_TEST_PROBLEMS", 200), 2);
}

static void test_cuda_random_host_pointers(void)
{
    convt3d_device gpu = {CONVT3D_DEVICE_CUDA, 0};
    random_problems_on(gpu, HOST_POINTERS, env_count("CONVT3D_TEST_PROBLEMS", 200) / 4, 3);
}

void register_backend_tests(void)
{
    static const test_entry tests[] = {
        {"cpu: random problems vs reference", test_cpu_random},
        {"cuda: random problems, device pointers", test_cuda_random_device_pointers},
        {"cuda: random problems, host pointers (staged)", test_cuda_random_host_pointers},
        {NULL, NULL}};
    add_suite("backends", tests);
}
