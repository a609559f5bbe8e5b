// Tests of the shim: MPI type and operation translation (MPI initialised, one process), the
// exported symbols of liboverpass.so, which must be exactly the entry points of
// shim/intercepted.def, and the kinds of argument of that list (shim/intercepted.h), those of
// the vector and nonblocking collectives included.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdio>
#include <cstring>
#include <memory>
#include <set>
#include <string>
#include <type_traits>
#include <vector>

#include "shim/comm_state.h"
#include "shim/intercepted.h"
#include "shim/type_map.h"

namespace overpass::shim {
namespace {

std::string run(const std::string& command) {
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(command.c_str(), "r"), pclose);
  std::string out;
  char buf[4096];
  while (pipe && fgets(buf, sizeof(buf), pipe.get())) out += buf;
  return out;
}

TEST(TypeMap, PredefinedTypes) {
  EXPECT_EQ(reductionType(MPI_INT), DataType::kInt32);
  EXPECT_EQ(reductionType(MPI_UNSIGNED_LONG), DataType::kUint64);
  EXPECT_EQ(reductionType(MPI_SIGNED_CHAR), DataType::kInt8);
  EXPECT_EQ(reductionType(MPI_FLOAT), DataType::kFloat);
  EXPECT_EQ(reductionType(MPI_LONG_DOUBLE), DataType::kLongDouble);
  EXPECT_EQ(reductionType(MPI_C_DOUBLE_COMPLEX), DataType::kComplexDouble);
  EXPECT_EQ(reductionType(MPI_C_BOOL), DataType::kBool);
  EXPECT_EQ(reductionType(MPI_BYTE), DataType::kByte);
  EXPECT_EQ(reductionType(MPI_AINT), DataType::kInt64);
  EXPECT_EQ(reductionType(MPI_DOUBLE_INT), DataType::kDoubleInt);
  EXPECT_EQ(reductionType(MPI_SHORT_INT), DataType::kShortInt);
  EXPECT_EQ(reductionType(MPI_LONG_DOUBLE_INT), DataType::kLongDoubleInt);
  EXPECT_EQ(reductionType(MPI_2INT), DataType::kIntInt);
  // MPI defines no reduction on MPI_CHAR; the MPI library reports the error.
  EXPECT_EQ(reductionType(MPI_CHAR), std::nullopt);
}

TEST(TypeMap, FortranTypes) {
  EXPECT_EQ(reductionType(MPI_INTEGER), DataType::kInt32);
  EXPECT_EQ(reductionType(MPI_INTEGER8), DataType::kInt64);
  EXPECT_EQ(reductionType(MPI_REAL), DataType::kFloat);
  EXPECT_EQ(reductionType(MPI_DOUBLE_PRECISION), DataType::kDouble);
  EXPECT_EQ(reductionType(MPI_COMPLEX), DataType::kComplexFloat);
  EXPECT_EQ(reductionType(MPI_DOUBLE_COMPLEX), DataType::kComplexDouble);
  EXPECT_EQ(reductionType(MPI_LOGICAL), DataType::kLogical32);
  EXPECT_EQ(reductionType(MPI_2INTEGER), DataType::kIntInt);
  EXPECT_EQ(reductionType(MPI_2REAL), DataType::kFloatFloat);
  EXPECT_EQ(reductionType(MPI_2DOUBLE_PRECISION), DataType::kDoubleDouble);
  EXPECT_EQ(reductionType(MPI_CHARACTER), std::nullopt);
  EXPECT_EQ(reductionType(PMPI_Type_f2c(PMPI_Type_c2f(MPI_INTEGER))), DataType::kInt32);
}

TEST(TypeMap, DerivedTypesAreNotReductionTypes) {
  MPI_Datatype three;
  PMPI_Type_contiguous(3, MPI_INT, &three);
  PMPI_Type_commit(&three);
  EXPECT_EQ(reductionType(three), std::nullopt);
  PMPI_Type_free(&three);
}

void noop(void*, void*, int*, MPI_Datatype*) {}

TEST(TypeMap, Operations) {
  EXPECT_EQ(translateOp(MPI_SUM), ReduceOp::kSum);
  EXPECT_EQ(translateOp(MPI_PROD), ReduceOp::kProd);
  EXPECT_EQ(translateOp(MPI_MIN), ReduceOp::kMin);
  EXPECT_EQ(translateOp(MPI_MAX), ReduceOp::kMax);
  EXPECT_EQ(translateOp(MPI_LAND), ReduceOp::kLand);
  EXPECT_EQ(translateOp(MPI_LOR), ReduceOp::kLor);
  EXPECT_EQ(translateOp(MPI_LXOR), ReduceOp::kLxor);
  EXPECT_EQ(translateOp(MPI_BAND), ReduceOp::kBand);
  EXPECT_EQ(translateOp(MPI_BOR), ReduceOp::kBor);
  EXPECT_EQ(translateOp(MPI_BXOR), ReduceOp::kBxor);
  EXPECT_EQ(translateOp(MPI_MINLOC), ReduceOp::kMinloc);
  EXPECT_EQ(translateOp(MPI_MAXLOC), ReduceOp::kMaxloc);
  EXPECT_EQ(translateOp(MPI_REPLACE), std::nullopt);
  EXPECT_EQ(translateOp(MPI_NO_OP), std::nullopt);
  EXPECT_EQ(translateOp(MPI_OP_NULL), std::nullopt);
  MPI_Op user;
  PMPI_Op_create(noop, 1, &user);
  EXPECT_EQ(translateOp(user), ReduceOp::kUser);
  PMPI_Op_free(&user);
}

std::set<std::string> expectedSymbols() {
  std::set<std::string> names;
  auto fortran = [&](const std::string& lower, const std::string& upper) {
    for (const std::string& n : {"mpi_" + lower, "mpi_" + lower + "_", "mpi_" + lower + "__",
                                 "MPI_" + upper, "mpi_" + lower + "_f08_"})
      names.insert(n);
  };
#define OVERPASS_COLLECTIVE(Name, lower, UPPER, coll, args) \
  names.insert("MPI_" #Name);                               \
  fortran(#lower, #UPPER);
#define OVERPASS_BY_HAND(Name, lower, UPPER) \
  names.insert("MPI_" #Name);                \
  fortran(#lower, #UPPER);
#define OVERPASS_C_BY_HAND(Name) names.insert("MPI_" #Name);
#include "shim/intercepted.def"
  return names;
}

// The warm-up of a new communicator ends at the same call on every rank: a function of shared
// facts.
TEST(CommWarmUp, EndsAfterTheConfiguredCallsOrAtOnceWhereItPays) {
  CallShape small;
  small.coll = Collective::kAllreduce;
  small.bytes = 8;
  for (std::uint64_t call = 1; call <= 3; ++call)
    EXPECT_FALSE(warmUpEnds(false, 3, call, small)) << call;
  EXPECT_TRUE(warmUpEnds(false, 3, 4, small));
  EXPECT_TRUE(warmUpEnds(false, 0, 1, small));  // OVERPASS_COMM_WARMUP=0: set up at once
  EXPECT_TRUE(warmUpEnds(true, 3, 1, small));   // MPI_COMM_WORLD: no warm-up
  CallShape large = small;
  large.bytes = kWarmUpEndBytes;
  EXPECT_TRUE(warmUpEnds(false, 3, 1, large));
  large.bytes = kWarmUpEndBytes - 1;
  EXPECT_FALSE(warmUpEnds(false, 3, 1, large));
  CallShape ordered = small;  // deterministic mode: the MPI library's order is not rank order
  ordered.ordered = true;
  EXPECT_TRUE(warmUpEnds(false, 3, 1, ordered));
}

TEST(CommPool, ReusesASlotFreeEverywhereElseFillsOneEmptyEverywhere) {
  // Slot 2 free on every rank, slot 0 empty everywhere: slot 2 is reused.
  SlotChoice c = chooseSlot(0b100, 0b001, 0b101);
  EXPECT_EQ(c.slot, 2);
  EXPECT_TRUE(c.reuse);
  EXPECT_EQ(c.stale, 0u);
  // Nothing free everywhere: the lowest slot empty everywhere gets a new engine.
  c = chooseSlot(0, 0b1010, 0b1010);
  EXPECT_EQ(c.slot, 1);
  EXPECT_FALSE(c.reuse);
  // Every slot in use on some rank: a new engine outside the pool.
  c = chooseSlot(0, 0, 0);
  EXPECT_EQ(c.slot, -1);
  EXPECT_FALSE(c.reuse);
  // Slot 3 idle everywhere but free on some ranks, empty on others (one rank evicted its
  // engine): stale, emptied everywhere; slot 5, in use on some rank, is left alone.
  c = chooseSlot(0, 0b0001, 0b1001);
  EXPECT_EQ(c.slot, 0);
  EXPECT_EQ(c.stale, 0b1000u);
}

// Entries as shim/intercepted.def would list the vector and nonblocking collectives, with every
// kind of argument: X(MPI function, test name, lower, arguments). Their generated C parameters
// must be the MPI library's own signature, and their generated Fortran bodies (calling the
// recorders on<test name> below) must translate every kind.
#define OVERPASS_TEST_ENTRIES(X)                                                               \
  X(Iallgatherv, TestIallgatherv, test_iallgatherv,                                            \
    (BufIn(sendbuf), Int(sendcount), Datatype(sendtype), BufOut(recvbuf), Ints(recvcounts),    \
     Ints(displs), Datatype(recvtype), Comm(comm), Request(request)))                          \
  X(Alltoallv, TestAlltoallv, test_alltoallv,                                                  \
    (BufIn(sendbuf), Ints(sendcounts), Ints(sdispls), Datatype(sendtype), BufOut(recvbuf),     \
     Ints(recvcounts), Ints(rdispls), Datatype(recvtype), Comm(comm)))                         \
  X(Iallreduce, TestIallreduce, test_iallreduce,                                               \
    (BufIn(sendbuf), BufOut(recvbuf), Int(count), Datatype(datatype), Op(op), Comm(comm),      \
     Request(request)))                                                                        \
  X(Ibcast, TestIbcast, test_ibcast,                                                           \
    (BufOut(buffer), Int(count), Datatype(datatype), Int(root), Comm(comm), Request(request))) \
  X(Ibarrier, TestIbarrier, test_ibarrier, (Comm(comm), Request(request)))

#define OVERPASS_X(Mpi, Test, lower, args)                                               \
  static_assert(std::is_same_v<int (*)(OVERPASS_C_PARAMS(args)), decltype(&PMPI_##Mpi)>, \
                "the kinds give MPI_" #Mpi "'s signature");
OVERPASS_TEST_ENTRIES(OVERPASS_X)
#undef OVERPASS_X

// What the last recorder saw.
struct Recorded {
  std::vector<const void*> buffers;
  std::vector<int> ints;
  std::vector<const int*> arrays;
  std::vector<MPI_Datatype> types;
  MPI_Op op = MPI_OP_NULL;
  MPI_Comm comm = MPI_COMM_NULL;
  MPI_Request request = MPI_REQUEST_NULL;  // the one the recorder started
  int rc = MPI_SUCCESS;                    // what the recorder returns
};
Recorded recorded;

// A request the recorders hand back: a real one, so that its Fortran handle means something.
int startRequest(MPI_Request* request) {
  const int rc = PMPI_Ibarrier(MPI_COMM_SELF, request);
  recorded.request = *request;
  return rc;
}

}  // namespace

int onTestIallgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                      const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                      MPI_Comm comm, MPI_Request* request) {
  recorded.buffers = {sendbuf, recvbuf};
  recorded.ints = {sendcount};
  recorded.arrays = {recvcounts, displs};
  recorded.types = {sendtype, recvtype};
  recorded.comm = comm;
  if (recorded.rc != MPI_SUCCESS) return recorded.rc;
  return startRequest(request);
}

int onTestAlltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[],
                    MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                    const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm) {
  recorded.buffers = {sendbuf, recvbuf};
  recorded.arrays = {sendcounts, sdispls, recvcounts, rdispls};
  recorded.types = {sendtype, recvtype};
  recorded.comm = comm;
  return recorded.rc;
}

int onTestIallreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype,
                     MPI_Op op, MPI_Comm comm, MPI_Request* request) {
  recorded.buffers = {sendbuf, recvbuf};
  recorded.ints = {count};
  recorded.types = {datatype};
  recorded.op = op;
  recorded.comm = comm;
  if (recorded.rc != MPI_SUCCESS) return recorded.rc;
  return startRequest(request);
}

int onTestIbcast(void* buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm,
                 MPI_Request* request) {
  recorded.buffers = {buffer};
  recorded.ints = {count, root};
  recorded.types = {datatype};
  recorded.comm = comm;
  if (recorded.rc != MPI_SUCCESS) return recorded.rc;
  return startRequest(request);
}

int onTestIbarrier(MPI_Comm comm, MPI_Request* request) {
  recorded.comm = comm;
  if (recorded.rc != MPI_SUCCESS) return recorded.rc;
  return startRequest(request);
}

namespace {

#define OVERPASS_X(Mpi, Test, lower, args) OVERPASS_FORTRAN_BODY(Test, lower, args)
OVERPASS_TEST_ENTRIES(OVERPASS_X)
#undef OVERPASS_X

// A request's Fortran handle, completed.
void waitFortran(MPI_Fint handle) {
  MPI_Request request = PMPI_Request_f2c(handle);
  EXPECT_EQ(request, recorded.request);
  EXPECT_EQ(PMPI_Wait(&request, MPI_STATUS_IGNORE), MPI_SUCCESS);
}

TEST(FortranKinds, IntsArePassedAsTheyAreAndRequestsComeBackAsFortranHandles) {
  recorded = Recorded{};
  const MPI_Fint fint = PMPI_Type_c2f(MPI_INT), fdouble = PMPI_Type_c2f(MPI_DOUBLE);
  const MPI_Fint fcomm = PMPI_Comm_c2f(MPI_COMM_WORLD), fmax = PMPI_Op_c2f(MPI_MAX);
  const MPI_Fint counts[2] = {3, 4}, displs[2] = {0, 3}, one = 1, five = 5;
  int send[8] = {}, recv[8] = {};
  MPI_Fint request = -1, ierror = -1;
  overpass_f_test_iallgatherv(send, &five, &fint, recv, counts, displs, &fdouble, &fcomm, &request,
                              &ierror);
  EXPECT_EQ(ierror, MPI_SUCCESS);
  EXPECT_EQ(recorded.buffers, (std::vector<const void*>{send, recv}));
  EXPECT_EQ(recorded.ints, std::vector<int>{5});
  EXPECT_EQ(recorded.arrays, (std::vector<const int*>{counts, displs}));  // the very arrays
  EXPECT_EQ(recorded.types, (std::vector<MPI_Datatype>{MPI_INT, MPI_DOUBLE}));
  EXPECT_EQ(recorded.comm, MPI_COMM_WORLD);
  waitFortran(request);

  overpass_f_test_alltoallv(send, counts, displs, &fint, recv, displs, counts, &fint, &fcomm,
                            nullptr);  // mpi_f08: no ierror
  EXPECT_EQ(recorded.arrays, (std::vector<const int*>{counts, displs, displs, counts}));

  overpass_f_test_iallreduce(send, recv, &five, &fint, &fmax, &fcomm, &request, &ierror);
  EXPECT_EQ(recorded.op, MPI_MAX);
  EXPECT_EQ(recorded.ints, std::vector<int>{5});
  waitFortran(request);

  overpass_f_test_ibcast(recv, &five, &fdouble, &one, &fcomm, &request, nullptr);
  EXPECT_EQ(recorded.ints, (std::vector<int>{5, 1}));
  waitFortran(request);

  overpass_f_test_ibarrier(&fcomm, &request, &ierror);
  EXPECT_EQ(ierror, MPI_SUCCESS);
  waitFortran(request);
}

TEST(FortranKinds, AFailedCallLeavesTheRequestAloneAndSetsIerror) {
  recorded = Recorded{};
  recorded.rc = MPI_ERR_OTHER;
  const MPI_Fint fcomm = PMPI_Comm_c2f(MPI_COMM_SELF);
  MPI_Fint request = -7, ierror = MPI_SUCCESS;
  overpass_f_test_ibarrier(&fcomm, &request, &ierror);
  EXPECT_EQ(ierror, MPI_ERR_OTHER);
  EXPECT_EQ(request, -7);
  EXPECT_EQ(recorded.comm, MPI_COMM_SELF);
  overpass_f_test_ibarrier(&fcomm, &request, nullptr);  // no ierror to set
  EXPECT_EQ(request, -7);
}

TEST(Library, ExportsExactlyTheInterceptionList) {
  const std::string out = run(std::string("nm -D --defined-only ") + OVERPASS_LIBRARY_PATH);
  ASSERT_FALSE(out.empty());
  std::set<std::string> exported;
  char type;
  char name[512];
  for (const char* line = out.c_str(); *line;) {
    if (std::sscanf(line, "%*s %c %511s", &type, name) == 2 && type != 'U') exported.insert(name);
    const char* next = std::strchr(line, '\n');
    line = next ? next + 1 : line + std::strlen(line);
  }
  EXPECT_EQ(exported, expectedSymbols());
  // 16 collectives, blocking and nonblocking; MPI_Init(_thread), MPI_Request_free (each C and
  // five Fortran names); MPI_Wait and MPI_Waitall (C).
  EXPECT_EQ(expectedSymbols().size(), 35u * 6u + 2u);
}

TEST(Library, DependsOnNoCxxRuntimeAndNoCuda) {
  const std::string needed =
      run(std::string("objdump -p ") + OVERPASS_LIBRARY_PATH + " | grep NEEDED");
  EXPECT_NE(needed.find("libmpi.so"), std::string::npos) << needed;
  for (const char* lib : {"libstdc++", "libgcc_s", "libcuda", "libcudart"})
    EXPECT_EQ(needed.find(lib), std::string::npos) << lib << " in\n" << needed;
}

}  // namespace
}  // namespace overpass::shim

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  PMPI_Init(&argc, &argv);
  overpass::shim::initTypeMap();
  const int rc = RUN_ALL_TESTS();
  PMPI_Finalize();
  return rc;
}
